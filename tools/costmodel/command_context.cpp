#include "tools/costmodel/command_context.hpp"

#include "costmodels/analytical/calibration.hpp"
#include "sim/config/input_error.hpp"

namespace servesim::costmodel_cmd {

Context load(const CostmodelArgs& a, bool need_profiles) {
  Context c;
  const ConfigNode where = ConfigNode::flag("--gpu");
  if (!a.hardware_file.empty()) {
    c.gpu = Catalog::load_gpu(ConfigNode::load_file(a.hardware_file));
    // Another GPU's constants would price these rows (and fit --write would file them under it).
    if (!c.gpu.answers_to(a.gpu)) {
      throw InputError(
          fmt::format("--hardware: {} describes {}, not --gpu {} (expected a file "
                      "whose name or aliases include it)",
                      a.hardware_file, c.gpu.name, a.gpu));
    }
  } else {
    c.gpu = c.catalog.gpu(a.gpu, where);
  }
  c.params = AnalyticalParams::for_gpu(c.gpu);
  if (!a.engine.empty()) {
    // An inline map when it looks like one; else a name or path, quoted so that YAML's words
    // (null, ~, a comment) stay the name they look like.
    std::string text = a.engine;
    if (text.find_first_not_of(" \t") == std::string::npos ||
        text[text.find_first_not_of(" \t")] != '{') {
      std::string quoted = "'";
      for (const char ch : text) quoted += ch == '\'' ? std::string("''") : std::string(1, ch);
      text = quoted + "'";
    }
    c.engine = EngineProfile::load(ConfigNode::parse(text, "--engine"));
    c.engine->apply(c.gpu, c.params);
  }
  if (need_profiles) {
    // Only this GPU's rows: DIR/<--gpu>, DIR/<catalog name or alias>, or DIR if it is the GPU's
    // own folder (never every GPU below DIR).
    std::vector<std::string> names = c.gpu.names();
    names.insert(names.begin(), a.gpu);
    for (auto& [id, path] : find_gpu_profiles(a.profiles, names, "--profiles").files) {
      if (a.model.empty() || lowercase(a.model) == lowercase(id)) c.profiles.emplace_back(id, path);
    }
    if (c.profiles.empty()) {
      throw InputError("--profiles: no mlp.csv for GPU '" + a.gpu + "'" +
                       (a.model.empty() ? "" : " and model '" + a.model + "'") + " under " +
                       a.profiles);
    }
  }
  return c;
}

const ModelSpec* catalog_model(Catalog& catalog, const std::string& id) {
  for (const std::string& n : catalog.model_names()) {
    if (lowercase(n) == lowercase(id)) return &catalog.model(n, ConfigNode::flag("--model"));
  }
  return nullptr;
}

std::vector<std::string> uncataloged(Context& c) {
  std::vector<std::string> ids;
  for (const auto& [id, path] : c.profiles) {
    if (catalog_model(c.catalog, id) == nullptr) ids.push_back(id);
  }
  return ids;
}

std::string uncataloged_text(Context& c) {
  std::string out;
  for (const std::string& id : uncataloged(c)) {
    out += fmt::format(
        "note: {} is not in the catalog: priced with RMSNorm and a serial attention-then-MLP "
        "block (add configs/models/{}.yaml for its own)\n",
        id, id);
  }
  return out;
}

std::vector<ProfileValidation> validate_all(Context& c, const AnalyticalParams& params,
                                            const AnalyticalTerms& terms, bool keep_residuals) {
  std::vector<ProfileValidation> out;
  for (const auto& [id, path] : c.profiles) {
    const auto rows = read_vidur_mlp(path);
    out.push_back(validate_profile(rows, id, c.gpu, catalog_model(c.catalog, id), params, terms,
                                   keep_residuals));
  }
  return out;
}

FitData read_fit_data(Context& c) {
  FitData d;
  d.models.reserve(c.profiles.size());
  for (const auto& [id, path] : c.profiles) {
    auto rows = read_vidur_mlp(path);
    d.models.push_back(model_from_profile(rows.front(), id, catalog_model(c.catalog, id)));
    d.files.emplace_back(path, std::move(rows));
  }
  return d;
}

nlohmann::json band_json(const ErrorStats& e) {
  return nlohmann::json{{"mape", e.mape()}, {"mean_signed_error", e.mspe()}, {"n", e.n}};
}

}  // namespace servesim::costmodel_cmd
