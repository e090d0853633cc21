# expect: partial
# assignment: attention
# base: reference
# message: KeyboardInterrupt
# why: functions raise KeyboardInterrupt, SystemExit, GeneratorExit and a BaseException subclass whose __str__ raises; each must become an error for that function only, never stop the judge

import torch


class Sneaky(BaseException):
    def __str__(self):
        raise RuntimeError("no message for you")

    def __repr__(self):
        raise RuntimeError("no repr either")


def attention_entropy(weights):
    raise KeyboardInterrupt


def bag_of_past(v):
    raise SystemExit(3)


def merge_heads(x):
    raise Sneaky()


def causal_mask(T, device=None):
    raise GeneratorExit("closing")
