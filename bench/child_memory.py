"""Measure the sandboxed child's address space (VmPeak) and resident memory while grading the reference.

Sizes the RLIMIT_AS default (memory_mib): run `python bench/child_memory.py`.
"""
import pathlib, tempfile
from grader import checking
from grader.sandbox.client import WorkerServer, SubmissionWorker
from grader.sandbox.proxy import StudentProxy
from grader.config import load_config
from grader.submission import load_submission
a = load_config().assignment('attention')
sub = load_submission(pathlib.Path('solutions/attention.py'))
with WorkerServer() as s:
    w = SubmissionWorker(s, sub.source, sub.filename, a.limits, pathlib.Path(tempfile.mkdtemp()))
    w.ensure_started()
    pid = w._child.pid
    def vm():
        return {l.split(':')[0]: l.split(':')[1].strip() for l in open(f'/proc/{pid}/status') if l.startswith(('VmPeak','VmHWM','VmSize','VmRSS'))}
    print('after load', vm())
    plugin = checking.GraderPlugin(StudentProxy(w), w, checking.load_reference(a.reference), sub, a, False)
    checking.run_checks(plugin, a)
    print('after all checks', vm())
    w.close()
