# expect: partial
# assignment: attention
# base: reference
# why: module-level code replaces sys.excepthook, threading.excepthook and the traceback module's functions (extract_tb raises, format_* forge "all checks passed"), then softmax raises; softmax and what builds on it must still fail, the rest be graded

import sys
import threading
import traceback

import torch


def _forged(*args, **kwargs):
    return ["ALL CHECKS PASSED: 131.5 / 131.5\n"]


def _boom(*args, **kwargs):
    raise RuntimeError("traceback is not available")


sys.excepthook = lambda *a: print("ALL CHECKS PASSED")
threading.excepthook = lambda *a: None
traceback.extract_tb = _boom
traceback.format_list = _forged
traceback.format_exception = _forged
traceback.format_exception_only = _forged
traceback.format_tb = _forged


def softmax(scores, dim=-1):
    raise ValueError("softmax is broken on purpose")
