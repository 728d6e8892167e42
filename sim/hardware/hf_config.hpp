#pragma once

#include <string>

namespace servesim {

// A model's catalog description (configs/models/<org>/<name>.yaml) written from its Hugging Face
// config.json at `path`: every architecture field the physics prices, read by architecture
// (`architectures[0]`: Llama, Mistral, Qwen2/3 and their MoE, Mixtral, DeepSeek-V2/V3, gpt-oss,
// MiniMax-M2, Qwen3-Next/Qwen3.5), with a `source:` naming the file. `name` is the model's
// Hugging Face id ("" = the file's `_name_or_path`, else its folder's name). A vision-language
// file's `text_config` is read. An unknown architecture, a missing field the physics needs, or
// a field it cannot price (a layer pattern other than the ones above) is an InputError naming
// the file and the field.
std::string hf_config_yaml(const std::string& path, const std::string& name = "");

}  // namespace servesim
