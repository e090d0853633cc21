# source: https://github.com/facebookresearch/XLM/pull/357
# exercise: attention_scores
# accept: scal|sqrt|raw dot|no scaling|divid|twice
# why: divides by sqrt(d) inside attention_scores, one stage early, so attention scales twice
# base: base_notebook


def attention_scores(q, k):
    assert q.shape[-1] == k.shape[-1], "q and k must share d"
    d = q.shape[-1]
    return (q / math.sqrt(d)) @ _swap_last_two(k)
