"""Bob Marley's birth date as YYYY-MM-DD: a regex makes the format certain (not the fact).

Run: python examples/birth_date.py
"""

import structgen

PROMPT = "When was Bob Marley born? Answer with the date only."
DATE = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"


def main() -> None:
    model, tokenizer = structgen.load_default_model()

    # Unconstrained: plain transformers, same chat template, same greedy decoding.
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": PROMPT}], tokenize=False, add_generation_prompt=True
    )
    inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False)
    out = model.generate(**inputs, max_new_tokens=24, do_sample=False)
    free = tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)

    constrained = structgen.generate_regex(model, tokenizer, PROMPT, DATE, max_new_tokens=16)

    print(f"prompt:        {PROMPT}")
    print(f"unconstrained: {free.strip()!r}")
    print(f"constrained:   {constrained!r}   (regex {DATE})")


if __name__ == "__main__":
    main()
