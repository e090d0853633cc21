# source: https://github.com/openai/guided-diffusion/issues/38
# exercise: scale_scores
# accept: fourth|sqrt\(.*sqrt|d ?\*\* ?0?\.25|quarter|twice|square root of (the )?square root
# why: copies the split scale 1/d**0.25 (meant for q and k each) but applies it once, so scores are divided by d**0.25 only
# base: correct_additive_mask

def scale_scores(scores, head_size):
    # scale = 1 / sqrt(sqrt(d)), as in the diffusion unet attention
    scale = 1 / math.sqrt(math.sqrt(head_size))
    return scores * scale
