# source: public code (code-search hit; yomi1117/study_repo llm/attention.py): "attn_scores = q @ k.T / (self.d_model ** 0.5)"
# exercise: attention_scores
# accept: k\.T|\.T\b|all (the )?dim|last two|transpos|revers
# why: k.T reverses every dim of a batched k instead of swapping its last two
# base: base_where


def attention_scores(q, k):
    return q @ k.T
