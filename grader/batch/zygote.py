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
import os

from grader.sandbox import server

server.prepare_fork()
# The fork server exits when the batch closes its pipe; torch's teardown (~0.2 s) would only delay the batch,
# which waits for it. Its forks never run this: they leave through os._exit too.
atexit.register(os._exit, 0)
