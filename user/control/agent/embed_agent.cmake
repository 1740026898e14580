# Build step of the runtime switch: writes the agent's shared object (built from
# jmt_agent.c) into a C++ header as bytes, so that jmethodtime stays one file
# and places the agent in the target JVM's mount namespace when it needs it.
#
# cmake -DINPUT=libjmtagent.so -DOUTPUT=agent_image.h -P embed_agent.cmake
cmake_minimum_required(VERSION 3.16)
foreach(var INPUT OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_agent.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR bytes "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "((0x..,){16})" "\\1\n" hex "${hex}")
file(WRITE "${OUTPUT}"
  "// Generated at build time by user/control/agent/embed_agent.cmake from\n"
  "// ${INPUT}: do not edit.\n"
  "#pragma once\n\n"
  "namespace jmt {\n\n"
  "// The JVMTI agent's shared object (user/control/agent/jmt_agent.c), ${bytes} bytes.\n"
  "static const unsigned char kAgentImage[${bytes}] = {\n${hex}};\n\n"
  "}  // namespace jmt\n")
