# Build step of --flamegraph: inlines d3 into the page template and writes both as one C++
# raw string, so the HTML the tool writes is self-contained (no network when it is opened).
#
# cmake -DD3_JS=/usr/share/javascript/d3/d3.min.js -DTEMPLATE=flamegraph_template.html
#       -DOUTPUT=flamegraph_html.h -P embed_flamegraph.cmake
#
# The template holds /*@JMT_D3@*/ once (replaced here by d3.min.js) and the placeholders
# report_flamegraph.cpp fills at run time (@JMT_TITLE@, @JMT_METRIC@, /*@JMT_DATA@*/).
cmake_minimum_required(VERSION 3.16)  # policies of a script run (CMP0054: quoted if() arguments)
foreach(var D3_JS TEMPLATE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_flamegraph.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${D3_JS}" d3)
file(READ "${TEMPLATE}" page)

set(delim "jmtfg")
string(TOLOWER "${d3}" d3_lower)
string(FIND "${d3_lower}" "</script" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${D3_JS} contains \"</script\": it cannot be inlined in a <script> element")
endif()
string(FIND "${d3}" "@JMT_" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${D3_JS} contains \"@JMT_\", the placeholder prefix of the flame graph template")
endif()
string(FIND "${d3}${page}" ")${delim}\"" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${D3_JS} or ${TEMPLATE} contains the raw-string delimiter )${delim}\"")
endif()
string(FIND "${page}" "/*@JMT_D3@*/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${TEMPLATE} has no /*@JMT_D3@*/ placeholder")
endif()
string(REPLACE "/*@JMT_D3@*/" "${d3}" page "${page}")

file(WRITE "${OUTPUT}"
  "// Generated at build time by user/report/embed_flamegraph.cmake from\n"
  "// ${TEMPLATE} and ${D3_JS}: do not edit.\n"
  "#pragma once\n\n"
  "namespace jmt {\n\n"
  "// The flame graph page, d3 inlined; see user/report/flamegraph_template.html.\n"
  "static const char kFlamegraphHtml[] = R\"${delim}(${page})${delim}\";\n\n"
  "}  // namespace jmt\n")
