# source: https://github.com/esceptico/perceiver-io/issues/9
# exercise: scale_scores
# accept: multipl|invert|instead of divid|divide|reciprocal|sqrt
# why: multiplies the scores by sqrt(head_size) instead of dividing
# base: base_where


def scale_scores(scores, head_size):
    return scores * (head_size ** 0.5)
