# Writes OUT: `#define SERVESIM_VERSION_STRING "<VERSION>+<git describe>"` (just VERSION outside a
# git checkout), rewriting it only when the text changes so that unchanged builds stay built.
# Run at every build by the servesim_version_inc target (sim/CMakeLists.txt).
execute_process(COMMAND git -C "${SOURCE_DIR}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                RESULT_VARIABLE rc)
if(rc EQUAL 0 AND NOT rev STREQUAL "")
  set(version "${VERSION}+${rev}")
else()
  set(version "${VERSION}")
endif()
set(text "#define SERVESIM_VERSION_STRING \"${version}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
