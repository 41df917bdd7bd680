"""Write the vLLM tier's two PEFT LoRA adapters for SmolLM2-135M-Instruct (scripts/install-vllm.sh
runs this with the tier's pinned peft):

- `applied`: rank 8 on q_proj/v_proj with both A and B drawn from a seeded normal distribution,
  so the update B·A is not zero and the adapter changes the model's distributions;
- `noop`: the same shape with PEFT's default initialisation (B = 0), so B·A is exactly zero:
  an adapter that is listed and served but changes nothing — the silent no-op `eval adapter`
  must name (docs/suites.md, "adapter").

Usage: make-vllm-lora.py MODEL_DIR OUT_APPLIED OUT_NOOP
"""
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

model_dir, out_applied, out_noop = sys.argv[1:4]


def write(out, init_nonzero):
    torch.manual_seed(20261205)
    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    cfg = LoraConfig(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj"], lora_dropout=0.0,
                     bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(base, cfg)
    if init_nonzero:
        with torch.no_grad():
            for name, p in model.named_parameters():
                if "lora_A" in name or "lora_B" in name:
                    p.normal_(0.0, 0.05)
    model.save_pretrained(out)
    print("wrote", out)


write(out_applied, True)
write(out_noop, False)
