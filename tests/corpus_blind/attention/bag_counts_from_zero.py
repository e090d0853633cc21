# source: classic (no public example found)
# exercise: bag_of_past
# accept: off.by.one|by zero|zero division|divid\w* by (0|zero|t\b)|starts? (at|from) (0|zero)|\bt\b instead of t ?\+ ?1|arange\(T\)|\bnan\b|\binf\b|0\.\.T-1
# why: counts with torch.arange(T) (0..T-1) instead of 1..T: row 0 divides by zero and row t by t instead of t+1
# base: base_colab_cells

# Step 7: the bag of the past -- row t is the average of rows 0..t
def bag_of_past(v):
    T = v.size(-2)
    running = torch.cumsum(v, dim=-2)
    how_many = torch.arange(T, dtype=v.dtype, device=v.device).view(T, 1)
    return running / how_many
