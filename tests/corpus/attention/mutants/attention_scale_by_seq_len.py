# expect: lose
# assignment: attention
# exercise: attention
# message: scale|sqrt
# diagnosis: attention_scale_by_seq_len
# why: attention scales by sqrt(T) (q.shape[-2], the sequence length) instead of sqrt(d) (q.shape[-1])
# replace: scores = scale_scores(scores, q.shape[-1]) ==> scores = scale_scores(scores, q.shape[-2])
