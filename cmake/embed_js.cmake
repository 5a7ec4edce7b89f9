# Writes OUT: a C++ source holding the charting libraries (vega, vega-lite, vega-embed from
# web/node_modules, installed by `make deps`) so the HTML report inlines them and stays offline.
set(body "namespace gf {\n")
foreach(pair "vega:vega/build/vega.min.js" "vega_lite:vega-lite/build/vega-lite.min.js"
        "vega_embed:vega-embed/build/vega-embed.min.js")
  string(REPLACE ":" ";" parts "${pair}")
  list(GET parts 0 name)
  list(GET parts 1 rel)
  set(path "${SRC_DIR}/node_modules/${rel}")
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "missing ${path}: run 'make deps' (npm ci in web/)")
  endif()
  file(READ "${path}" content)
  string(APPEND body "extern const char* const kJs_${name} = R\"gf_js_end(${content})gf_js_end\";\n")
endforeach()
string(APPEND body "}  // namespace gf\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
