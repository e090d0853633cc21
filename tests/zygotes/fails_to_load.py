"""A zygote whose import fails the way a broken torch install does (an OSError, not an ImportError, which
multiprocessing's fork server would ignore): the fork server dies before it forks anything."""

raise OSError("libtorch_cpu.so: cannot open shared object file (a test's broken install)")
