# source: public code (code-search hit; the index does not name the repository): "wei = k @ q.transpose(-2, -1) * (C**(-0.5))"
# exercise: attention_scores
# accept: transpos|k ?@ ?q|swap|rows? and columns?|keys? (times|@) quer
# why: computes k @ q^T, the transpose of the scores (rows are keys, columns are queries)
# base: correct_head_loop

def attention_scores(q, k):
    wei = k @ q.transpose(-2, -1)  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
    return wei
