# source: public code (code-search hit; the index does not name the repository): "score[i, j] = q[i] @ k[i]"
# exercise: attention_scores
# accept: index|loop|k\[i\]|same (key|position)|diagonal|wrong key|every (key|column)
# why: the double loop dots q[i] with k[i] instead of k[j], so every score in row i is the same q_i . k_i
# base: correct_loops

def attention_scores(q, k):
    T, S = q.shape[-2], k.shape[-2]
    scores = q.new_zeros(q.shape[:-2] + (T, S))
    for i in range(T):
        for j in range(S):
            scores[..., i, j] = (q[..., i, :] * k[..., i, :]).sum(dim=-1)
    return scores
