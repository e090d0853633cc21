# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: before the softmax
# clause: SelfAttentionHead.causal_in_training
# diagnosis: head_dropout_before_softmax
# why: the head masks with a finite fill (torch.finfo(dtype).min) and applies dropout to the masked scores, before the softmax: a dropped fill becomes 0, so in training mode future tokens get weight and change past outputs; eval mode is right
# may_fail: *::test_causal_in_training_mode*, *::test_dropout_acts_on_the_weights*, *::test_dropout_drops_at_the_asked_rate*, MultiHeadAttention::test_dropout_reaches_the_heads
# replace: wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf")) ==> wei = self.dropout(wei.masked_fill(self.tril[:T, :T] == 0, torch.finfo(wei.dtype).min))  # dropout on the masked scores
# replace: wei = self.dropout(wei)  # active only in training mode ==> pass  # no dropout after the softmax
