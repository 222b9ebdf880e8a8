# cmake -DNM=... -DPLUGIN=libnnfit_X.so -DOUT=X_imports.ld -P plugin_imports.cmake: the
# nnfit symbols the plugin leaves undefined, as a linker script of EXTERN() lines that the
# executables it binds to link (nnfit_export_core): each of them then holds every object
# the plugin calls into, not only the ones it calls itself (Note [Plugin symbols]).
execute_process(COMMAND ${NM} -D --undefined-only --format=posix ${PLUGIN}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} could not read ${PLUGIN}")
endif()
string(REGEX MATCHALL "[^\n]*5nnfit[^ \n]* [Uw]" symbols "${symbols}")
set(script "/* Generated from ${PLUGIN}: the nnfit symbols it imports. */\n")
foreach(line IN LISTS symbols)
  string(REGEX REPLACE " [Uw]$" "" symbol "${line}")
  string(APPEND script "EXTERN(${symbol})\n")
endforeach()
file(WRITE ${OUT}.tmp "${script}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
