# source: classic (no public example found)
# exercise: split_heads
# accept: revers|swapp|backwards|wrong way|n_heads ?% ?(c|x)|operands|raises? .{0,40}(valid|every|all|good|divisible)
# why: writes the divisibility test as n_heads % C, the wrong way round, so valid splits raise ValueError (and some invalid ones pass)
# base: base_terse

def split_heads(x, n_heads):
    if n_heads % x.shape[-1]:
        raise ValueError("channels must split evenly across heads")
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)
