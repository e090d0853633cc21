# source: classic (no public example found)
# exercise: scale_scores
# accept: floor|//|round|integer|whole number|truncat
# why: typo // for /: the scores are floor-divided by sqrt(head_size), so every scaled score is rounded down to a whole number (and gets no gradient)
# base: base_terse

def scale_scores(scores, head_size):
    return scores // head_size ** 0.5
