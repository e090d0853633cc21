# expect: full
# assignment: attention
# base: reference
# output_has: FORK-REFUSED
# output_lacks: FORK-SUCCEEDED
# why: a fork bomb capped at 20 forks (os.fork, raw syscalls, multiprocessing) inside attention_entropy; every fork must fail, nothing may survive grading, and the correct result still earns full marks

import ctypes
import os
import time

import torch

_attempts = [0]


def _forked_child():
    # Only reached if a protection regressed: linger, to be caught by the leak check, then go.
    try:
        print("FORK-SUCCEEDED", flush=True)
        time.sleep(20)
    finally:
        os._exit(0)


def _try_forks():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    while _attempts[0] < 20:
        _attempts[0] += 1
        try:
            if _attempts[0] % 4 == 0:
                pid = libc.syscall(ctypes.c_long(57))  # raw fork(2) on x86_64
                if pid < 0:
                    raise OSError(ctypes.get_errno(), "raw fork refused")
            elif _attempts[0] % 4 == 1:
                pid = libc.syscall(ctypes.c_long(56), ctypes.c_long(17), None, None, None, None)  # clone(SIGCHLD)
                if pid < 0:
                    raise OSError(ctypes.get_errno(), "raw clone refused")
            elif _attempts[0] % 4 == 2:
                import multiprocessing

                proc = multiprocessing.get_context("fork").Process(target=time.sleep, args=(20,))
                proc.start()
                pid = proc.pid or 1
            else:
                pid = os.fork()
        except (OSError, ValueError, RuntimeError) as exc:
            print(f"FORK-REFUSED {type(exc).__name__}: {exc}", flush=True)
            continue
        if pid == 0:
            _forked_child()
        print("FORK-SUCCEEDED in the parent", flush=True)


def attention_entropy(weights):
    _try_forks()
    p = weights
    log_p = torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))
    return -(p * log_p).sum(dim=-1)
