# source: classic (no public example found)
# exercise: scale_scores
# accept: sqrt|square root|not by head_size|instead of.*root|by d\b
# why: divides by head_size instead of sqrt(head_size)
# base: base_loops


def scale_scores(scores, head_size):
    return scores / head_size
