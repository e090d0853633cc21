# expect: lose
# assignment: attention
# exercise: causal_mask
# message: mask|bool|device
# diagnosis: causal_mask_bare_ones
# why: causal_mask returns torch.ones(T, T).tril(): float32 and always on the CPU (the GPT-tutorial tril)
# replace: return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T) ==> return torch.tril(torch.ones(T, T))  # float32, CPU
