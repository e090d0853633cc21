# source: classic (no public example found)
# exercise: bag_of_past
# accept: sum instead of (the )?mean|not (normalis|normaliz|divid)|divid|average|mean|t ?\+ ?1|count|normali[sz]
# why: multiplies v by a tril of ones: row t is the sum of v[0..t], never divided by t+1
# base: base_notebook_plt
# step 7: the boring baseline, every past token counts the same
def bag_of_past(v):
    T = v.shape[-2]
    tril = torch.tril(torch.ones(T, T, dtype=v.dtype, device=v.device))
    return tril @ v  # row t adds up tokens 0..t
