# expect: placeholder
# assignment: attention-modules
# base: reference
# why: the contract's submodules and buffers, but forward hands back its input (sliced to the head size)
# replace: return wei @ v  # (B, T, hs) ==> return x[..., : self.head_size].clone()
# replace: return self.dropout(self.proj(out))  # (B, T, d_model) ==> return x.clone()
