# source: public code (code-search hit; the index does not name the repository): "wei *= C**-0.5"
# exercise: scale_scores
# accept: in[- ]place|modif|div_|/=|\*=|changes? (the )?(input|caller)|overwrit
# why: divides the caller's scores tensor in place (div_) and returns it, changing its input
# base: correct_chunk_entr

def scale_scores(scores, head_size):
    scores.div_(math.sqrt(head_size))
    return scores
