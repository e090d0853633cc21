# expect: partial
# assignment: attention
# base: reference
# message: exited with status 0
# why: softmax calls os._exit(0); its checks (and those of functions built on it) must end in an error, the worker restarts, and the other functions are still graded

import os


def softmax(scores, dim=-1):
    os._exit(0)
