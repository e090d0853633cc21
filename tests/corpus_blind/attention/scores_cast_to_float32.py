# source: public code (code-search hit; ise-uiuc/WhiteFox source-code-data/pytorch/inductor-sfdp/sfdp=7.py): "div = div.to(torch.float32)"
# exercise: attention_scores
# accept: float32|dtype|float64|float16|half|double|precision|upcast|\bcast
# why: casts q and k to float32 before the product, so float64 and float16 inputs give float32 scores (float32 inputs are unchanged)
# base: base_defensive

def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    _check_float("q", q)
    _check_float("k", k)
    assert q.dim() >= 2 and k.dim() >= 2, "q and k need at least (T, d)"
    assert q.shape[-1] == k.shape[-1], "q and k must share the feature size d"
    # do the dot products in float32 so half-precision inputs don't lose digits
    q32 = q.float()
    k32 = k.float()
    scores = torch.matmul(q32, torch.transpose(k32, -2, -1))  # (..., T, S)
    return scores
