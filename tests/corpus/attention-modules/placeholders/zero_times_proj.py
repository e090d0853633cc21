# expect: placeholder
# assignment: attention-modules
# base: reference
# why: the contract's submodules and buffers, but forward returns 0 * a projection of x: computes nothing
# replace: return wei @ v  # (B, T, hs) ==> return 0 * self.query(x)
# replace: return self.dropout(self.proj(out))  # (B, T, d_model) ==> return self.dropout(0 * self.proj(x))
