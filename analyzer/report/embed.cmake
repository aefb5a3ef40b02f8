# Turns the HTML report's script and style sheet into C string literals (a header the report includes):
#   cmake -DOUT=html_assets.h -DJS=html_view.js -DCSS=html_view.css -P embed.cmake
function(vt_embed var file out)
  file(READ "${file}" z)
  string(REPLACE "\\" "\\\\" z "${z}")
  string(REPLACE "\"" "\\\"" z "${z}")
  string(REPLACE "\n" "\\n\"\n\"" z "${z}")
  file(APPEND "${out}" "static const char ${var}[] =\n\"${z}\";\n")
endfunction()
file(WRITE "${OUT}.tmp" "/* Generated from html_view.js and html_view.css by embed.cmake: do not edit. */\n")
vt_embed(vt__html_js "${JS}" "${OUT}.tmp")
vt_embed(vt__html_css "${CSS}" "${OUT}.tmp")
file(RENAME "${OUT}.tmp" "${OUT}")
