"""The engine: tokenization and the model's forward pass (encoder), the batched kernels (tensor_ops), scoring and
explanations (scorer), idf, rescaling baselines and the result objects. No Streamlit, no files but baselines."""
