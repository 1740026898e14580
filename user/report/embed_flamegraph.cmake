# Build step of --flamegraph: inlines the page's script into the page template and writes both
# as one C++ raw string, so the HTML the tool writes is self-contained (no network when it is
# opened).
#
# cmake -DSCRIPT=flamegraph.js -DTEMPLATE=flamegraph_template.html -DOUTPUT=flamegraph_html.h
#       -P embed_flamegraph.cmake
#
# The template holds /*@JMT_SCRIPT@*/ once (replaced here by flamegraph.js) and the
# placeholders flamegraph.cpp fills at run time (@JMT_TITLE@, @JMT_METRIC@, /*@JMT_DATA@*/).
cmake_minimum_required(VERSION 3.16)  # policies of a script run (CMP0054: quoted if() arguments)
foreach(var SCRIPT TEMPLATE OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_flamegraph.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${SCRIPT}" script)
file(READ "${TEMPLATE}" page)

set(delim "jmtfg")
string(TOLOWER "${script}" script_lower)
string(FIND "${script_lower}" "</script" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${SCRIPT} contains \"</script\": it cannot be inlined in a <script> element")
endif()
string(FIND "${script}" "@JMT_" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${SCRIPT} contains \"@JMT_\", the placeholder prefix of the flame graph template")
endif()
string(FIND "${script}${page}" ")${delim}\"" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${SCRIPT} or ${TEMPLATE} contains the raw-string delimiter )${delim}\"")
endif()
string(FIND "${page}" "/*@JMT_SCRIPT@*/" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${TEMPLATE} has no /*@JMT_SCRIPT@*/ placeholder")
endif()
string(REPLACE "/*@JMT_SCRIPT@*/" "${script}" page "${page}")

file(WRITE "${OUTPUT}"
  "// Generated at build time by user/report/embed_flamegraph.cmake from\n"
  "// ${TEMPLATE} and ${SCRIPT}: do not edit.\n"
  "#pragma once\n\n"
  "namespace jmt {\n\n"
  "// The flame graph page, its script inlined; see user/report/flamegraph_template.html.\n"
  "static const char kFlamegraphHtml[] = R\"${delim}(${page})${delim}\";\n\n"
  "}  // namespace jmt\n")
