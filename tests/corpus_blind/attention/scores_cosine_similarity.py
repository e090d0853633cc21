# source: classic (no public example found)
# exercise: attention_scores
# accept: cosine|unit.?length|normali[sz]\w* (q|k|the quer|the key|each|both|by (their|its) (length|norm))|divid\w* by (the|their|its) (length|norm)|l2|\bnorms?\b
# why: divides q and k by their lengths first (F.normalize), so the scores are cosine similarities in [-1, 1], not the raw dot products
# base: base_terse

import torch.nn.functional as F


def attention_scores(q, k):
    return F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).mT
