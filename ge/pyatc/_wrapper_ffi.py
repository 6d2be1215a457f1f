# auto-generated file
import _cffi_backend

ffi = _cffi_backend.FFI('ge.pyatc._wrapper_ffi',
    _version = 0x2601,
    _types = b'\x00\x00\x01\x0D\x00\x00\x07\x01\x00\x00\x04\x03\x00\x00\x00\x0F\x00\x00\x05\x03\x00\x00\x02\x01',
    _globals = (b'\x00\x00\x00\x23GeApiWrapper_Atc_Main',0,),
)
