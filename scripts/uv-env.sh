# Sourced (`. scripts/uv-env.sh`) by scripts/setup, scripts/demo and scripts/check before they run uv.
#
# A uv setting (a UV_* environment variable) exported with an empty value is taken as unset, as a
# person means it (`export UV_CACHE_DIR=` to drop a cache folder set earlier). uv itself reads an
# empty value as that option given without one and stops before doing anything, e.g. (uv 0.13):
#   UV_CACHE_DIR=      error: a value is required for '--cache-dir <CACHE_DIR>' but none was supplied
#   UV_FROZEN=         error: Failed to parse environment variable `UV_FROZEN` with invalid value ``
#   UV_LINK_MODE=      error: a value is required for '--link-mode <LINK_MODE>' but none was supplied
#   UV_NO_CACHE=       error: invalid value '' for '--no-cache': value was not a boolean
# and so for some forty more (every boolean, path and choice setting). Each such variable is
# unset here, for uv and for everything it runs. POSIX sh; changes only this shell's variables.
for _uv_name in $(env | sed -n 's/^\(UV_[A-Za-z0-9_]*\)=$/\1/p'); do
  # the line may come from another variable's value holding a newline: unset only an empty one
  eval "_uv_value=\${$_uv_name-x}"
  if [ -z "$_uv_value" ]; then
    unset "$_uv_name"
  fi
done
unset _uv_name _uv_value
