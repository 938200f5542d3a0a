/**
 * ExtData is used to handle Extension Types that are not registered to ExtensionCodec.
 */
export class ExtData {
    type;
    data;
    constructor(type, data) {
        this.type = type;
        this.data = data;
    }
}
