# source: https://github.com/yomi1117/study_repo/blob/HEAD/llm/attention.py
# exercise: attention_scores
# accept: \.T\b|k\.t|reverses?|all (the )?dims|batch|transpose\(-2, ?-1\)
# why: uses k.T, which reverses every dim: right for a 2-D k, wrong once there are batch or head dims
# base: correct_loops

def attention_scores(q, k):
    scores = torch.matmul(q, k.T)
    return scores
