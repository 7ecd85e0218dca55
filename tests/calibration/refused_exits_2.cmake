# `rapid calibrate` refuses a measurements CSV: exit code 2, one message holding every text
# of WANT (a ;-list: the file, the key, the value), and no output file left behind.
#   cmake -DRAPID=<rapid> -DSRC=<source dir> -DCSV=<csv under SRC> -DWANT="a;b" \
#         -DOUT=<output yaml> -P refused_exits_2.cmake
file(REMOVE ${OUT} ${OUT}.tmp)
execute_process(
  COMMAND ${RAPID} calibrate --hardware ${SRC}/configs/hardware/h100-sxm5-80gb.yaml
          --measurements ${SRC}/${CSV} -o ${OUT}
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
message(STATUS "exit ${rc}: ${err}")
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "exit code ${rc}, expected 2")
endif()
string(REGEX MATCHALL "\n." lines "${err}")
if(lines)
  message(FATAL_ERROR "more than one line on stderr")
endif()
foreach(want ${WANT})
  string(FIND "${err}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${want}'")
  endif()
endforeach()
if(EXISTS ${OUT} OR EXISTS ${OUT}.tmp)
  message(FATAL_ERROR "output left behind: ${OUT}")
endif()
