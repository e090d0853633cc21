# source: public code (code-search hit; a safe_entropy helper): "return(np.nan_to_num(entropy_w_nan, nan=0.0))"
# exercise: attention_entropy
# accept: \bnan|zero (weights?|probabilit)|masked|0 ?\* ?log ?0|0 ?· ?log|whole row|entire row|rows? (with|containing) (a )?(zero|0)|after (the )?sum
# why: takes p * log p with NaN at the zero weights and replaces the NaN only after summing: every row with a masked zero gets entropy 0
# base: base_terse

def attention_entropy(weights):
    return torch.nan_to_num(-(weights * weights.log()).sum(-1))
