# source: classic (no public example found)
# exercise: mix_values
# accept: transpos|einsum|index|wrong (axis|dim)|weights\.?t\b|sum(s|med)? over (the )?(quer|t\b)
# why: the einsum sums over the query index t instead of the key index s (weights^T @ v)
# base: correct_einsum

def mix_values(weights, v):
    return torch.einsum('...ts,...td->...sd', weights, v)
