# source: https://github.com/karpathy/ng-video-lecture
# exercise: causal_mask
# accept: bool|dtype|float|boolean
# why: returns the lecture's float tril of ones instead of a bool mask
# base: correct_head_loop

def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device))
