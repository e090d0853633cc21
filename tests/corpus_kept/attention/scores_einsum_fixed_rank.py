# source: classic (no public example found)
# exercise: attention_scores
# accept: leading dim|batch dim|any number of|3-?d|three dim|2-?d|two dim|4-?d|four dim|head dim|ellipsis|\.\.\.|fixed number of dim|rank
# why: the einsum subscripts name exactly three dims (b, t, d): a plain (T, d) input or a (B, H, T, d) input raises instead of working for any leading dims
# base: base_functional
def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    # b = batch, t = query position, s = key position, d = feature
    return torch.einsum("btd,bsd->bts", q, k)
