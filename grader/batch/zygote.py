"""The batch's zygote: what every grader process of a ``grade-all`` shares, loaded once.

multiprocessing's fork server imports this module (``preload``) before it forks anything, so
each grader process starts as a fork of a process that has already imported torch and the
sandbox and done the judge's warm-up (``server.prepare_fork``), instead of a fresh interpreter
importing torch again: one ``import torch`` per batch, not one per grader process.

Nothing secret is loaded here, for the same reason as before the worker server's fork: each
grader process forks its server first (``launcher.WorkerServer.forked``), then loads the
config, the hidden checks and the reference; a sandboxed child holds only what the server held.
"""

import atexit
import importlib
import os

from grader.sandbox import server, warmup

server.prepare_fork()
# sympy, through torch's symbolic shapes (~0.3 s of CPU): each grader process's server would import it again
# after its fork, and the judge's first diagnosis replaying answers on the meta device once more. Only the
# import: the server's whole warm-up, run here where the environment still holds the course's secrets, left
# copies of one in memory that a sandboxed child inherited (tests/test_forked_server.py found it); the server
# scrubs its environment before it warms up.
importlib.import_module("torch.fx.experimental.symbolic_shapes")
warmup.freeze_what_is_loaded()

# The fork server exits when the batch closes its pipe; torch's teardown (~0.15 s) would only delay the batch,
# which waits for it. Registered last, so it runs first; the forks never run it (they leave through os._exit).
atexit.register(os._exit, 0)
