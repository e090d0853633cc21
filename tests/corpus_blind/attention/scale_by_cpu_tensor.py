# source: classic (no public example found)
# exercise: scale_scores
# accept: device|\bcpu\b|cuda|gpu|dtype|float32|float16|half|promot|shape \(1,?\)|one.element|1-?d tensor
# why: divides by torch.sqrt(torch.tensor([head_size])), a 1-element float32 tensor on the CPU: float16 scores come back float32, GPU scores fail, a 0-d input turns 1-d (float32 CPU values are unchanged)
# base: base_colab_cells

# Step 3: why divide by sqrt(d) and not by d?
def scale_scores(scores, head_size):
    d_k = torch.tensor([head_size], dtype=torch.float32)
    return scores / torch.sqrt(d_k)
