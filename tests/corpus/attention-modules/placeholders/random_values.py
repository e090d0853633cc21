# expect: placeholder
# assignment: attention-modules
# base: reference
# why: the contract's submodules and buffers, but forward returns random values of the right shape
# replace: return wei @ v  # (B, T, hs) ==> return torch.rand(*x.shape[:-1], self.head_size, dtype=x.dtype, device=x.device)
# replace: return self.dropout(self.proj(out))  # (B, T, d_model) ==> return torch.rand_like(x)
