# `rapid calibrate` on a malformed measurements CSV: exit code 2, one message naming the
# file, line 3, column 2 ('shape'), and no output file left behind.
#   cmake -DRAPID=<rapid> -DSRC=<source dir> -DOUT=<output yaml> -P bad_csv_exits_2.cmake
file(REMOVE ${OUT} ${OUT}.tmp)
execute_process(
  COMMAND ${RAPID} calibrate --hardware ${SRC}/configs/hardware/h100-sxm5-80gb.yaml
          --measurements ${SRC}/tests/calibration/bad-measurements.csv -o ${OUT}
  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
message(STATUS "exit ${rc}: ${err}")
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "exit code ${rc}, expected 2")
endif()
foreach(want "bad-measurements.csv:3:2" "key 'shape'" "'4096x4096'")
  string(FIND "${err}" "${want}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${want}'")
  endif()
endforeach()
if(EXISTS ${OUT} OR EXISTS ${OUT}.tmp)
  message(FATAL_ERROR "output left behind: ${OUT}")
endif()
