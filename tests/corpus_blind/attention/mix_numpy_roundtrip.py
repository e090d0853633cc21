# source: classic (no public example found)
# exercise: mix_values
# accept: numpy|gradient|autograd|detach|graph|backward|device|\bcpu\b|cuda|gpu
# why: does the product in NumPy (weights.detach().numpy() @ v.numpy()) and wraps it back: the numbers are right on the CPU but no gradient flows and GPU inputs come back on the CPU
# base: base_colab_cells

import numpy as np


# Step 6: weighted average of the values
def mix_values(weights, v):
    w_np = weights.detach().cpu().numpy()
    v_np = v.detach().cpu().numpy()
    return torch.from_numpy(np.matmul(w_np, v_np))
