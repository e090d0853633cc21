# source: classic (no public example found)
# exercise: scale_scores
# accept: precedence|-1 ?/ ?2|\*\* ?-1|2 ?\* ?(head_size|d)|divides? by .*(head_size|d)\b|parenthes
# why: head_size**-1/2 parses as (head_size**-1)/2, so the scores are divided by 2*head_size, not sqrt(head_size)
# base: correct_head_loop

def scale_scores(scores, head_size):
    return scores * head_size**-1/2
