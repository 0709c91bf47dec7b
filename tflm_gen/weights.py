"""--weights separate (issue #15): planned.  A device model split into a mini flatbuffer
(constant buffers empty, located by the schema's Buffer offset/size fields) and one weight
blob; the runtime resolves constant tensors into the blob given at init."""
