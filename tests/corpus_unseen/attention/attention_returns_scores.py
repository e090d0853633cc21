# source: https://github.com/PaddlePaddle/PaddleOCR/pull/4556
# exercise: attention
# accept: scores|before (the )?softmax|pre-?softmax|logits|raw|unnormali[sz]ed|not (the )?weights
# why: returns the scaled, masked scores as the second output instead of the softmax weights
# base: correct_tril_matmul

def attention(q, k, v, causal=True, scale=True):
    T = q.shape[-2]
    hs = q.shape[-1]
    wei = attention_scores(q, k)
    if scale:
        wei = scale_scores(wei, hs)
    if causal:
        wei = apply_mask(wei, causal_mask(T, device=q.device))
    att = softmax(wei, dim=-1)
    out = mix_values(att, v)
    return out, wei
